import type { SeededRandom } from "./random.js";

// Resource ids look like the real service's (`spring-example-302709`, `br-…`, `ep-…`): two
// words and six digits, which keeps them within `^[a-z0-9-]{1,60}$`.
const ADJECTIVES: readonly string[] = (
  "amber autumn billowing bold calm crimson damp dawn dry dusty empty fancy floral frosty " +
  "gentle green hidden icy jolly late lingering little lively misty morning muddy nameless " +
  "noisy odd old patient polished proud purple quiet restless rough shiny shy silent small " +
  "snowy soft solitary sparkling spring steep still summer sweet tiny twilight wandering " +
  "weathered white wild winter wispy withered young"
).split(" ");

const NOUNS: readonly string[] = (
  "bar base bird block boat bonus bread breeze brook bush butterfly cake cell cherry cloud " +
  "credit darkness dawn dew disk dream dust feather field fire firefly flower fog forest " +
  "frog frost glade glitter grass hall hat haze heart hill king lab lake leaf limit math " +
  "meadow mode moon morning mountain mouse mud night paper pine poetry pond queen rain " +
  "recipe resonance rice river salad scene sea shadow shape silence sky smoke snow " +
  "snowflake sound star sun sunset surf term thunder tooth tree truth union unit violet " +
  "voice water waterfall wave wildflower wind wood"
).split(" ");

/** The four 32-bit words of a version-4 UUID, as stored compactly in the operation log. */
export type UuidWords = readonly [number, number, number, number];

/** Mints every identifier from a seeded stream, never repeating a resource id. */
export class IdFactory {
  private readonly used = new Set<string>();

  constructor(private readonly random: SeededRandom) {}

  projectId(): string {
    return this.unique("");
  }

  branchId(): string {
    return this.unique("br-");
  }

  endpointId(): string {
    return this.unique("ep-");
  }

  /** `org-<words>-<8 digits>`, like the real API's organisation ids. */
  organizationId(): string {
    return this.unique("org-", 8);
  }

  /** Random UUID words with the version (4) and variant (10xx) bits set. */
  uuidWords(): UuidWords {
    const r = this.random;
    return [
      r.uint32(),
      ((r.uint32() & 0xffff0fff) | 0x00004000) >>> 0,
      ((r.uint32() & 0x3fffffff) | 0x80000000) >>> 0,
      r.uint32(),
    ];
  }

  uuid(): string {
    const [a, b, c, d] = this.uuidWords();
    return formatUuid(a, b, c, d);
  }

  private unique(prefix: string, digitCount = 6): string {
    for (;;) {
      const r = this.random;
      const digits = String(r.int(10 ** digitCount)).padStart(digitCount, "0");
      const id = `${prefix}${r.pick(ADJECTIVES)}-${r.pick(NOUNS)}-${digits}`;
      if (!this.used.has(id)) {
        this.used.add(id);
        return id;
      }
    }
  }
}

function hex(word: number, width: number): string {
  return word.toString(16).padStart(width, "0");
}

/** `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` from four 32-bit words. */
export function formatUuid(a: number, b: number, c: number, d: number): string {
  return (
    `${hex(a, 8)}-${hex(b >>> 16, 4)}-${hex(b & 0xffff, 4)}-` +
    `${hex(c >>> 16, 4)}-${hex(c & 0xffff, 4)}${hex(d, 8)}`
  );
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The first word of a UUID string (the key of the log's id index), or undefined if malformed. */
export function uuidFirstWord(id: string): number | undefined {
  return UUID_PATTERN.test(id) ? Number.parseInt(id.slice(0, 8), 16) : undefined;
}
