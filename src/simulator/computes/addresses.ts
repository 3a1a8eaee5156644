/**
 * The loopback addresses the compute host hands out, one per endpoint. Linux routes all of
 * 127.0.0.0/8 to the loopback interface, so each address can be bound without configuration.
 * They start at 127.1.0.1, clear of 127.0.0.0/24 (127.0.0.1, 127.0.0.53 and 127.0.1.1 are
 * commonly taken), and skip the .0 and .255 ends of every /24.
 */

const PER_BLOCK = 254;
const BLOCKS = 254 * 256;

/** The n-th address (n from 0). */
export function loopbackAddress(n: number): string {
  if (!(Number.isInteger(n) && n >= 0 && n < PER_BLOCK * BLOCKS)) {
    throw new RangeError(`no loopback address number ${n}`);
  }
  const block = Math.floor(n / PER_BLOCK);
  const last = (n % PER_BLOCK) + 1;
  const second = 1 + Math.floor(block / 256);
  return `127.${second}.${block % 256}.${last}`;
}
