/**
 * Maps strings to small integer codes and back, so that the operation log stores an action or
 * a status in two bytes. Actions and statuses are open sets, so codes are assigned on first use.
 */
export class Interner {
  private readonly codes = new Map<string, number>();
  private readonly values: string[] = [];

  constructor(private readonly capacity = 0xffff) {}

  code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      if (this.values.length >= this.capacity) {
        throw new RangeError(`more than ${this.capacity} distinct values`);
      }
      code = this.values.length;
      this.values.push(value);
      this.codes.set(value, code);
    }
    return code;
  }

  value(code: number): string {
    const value = this.values[code];
    if (value === undefined) throw new RangeError(`unknown code ${code}`);
    return value;
  }
}
