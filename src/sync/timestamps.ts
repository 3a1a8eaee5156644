/**
 * The API's timestamps as epoch milliseconds. Records read together share seconds (a busy log
 * has many per second, and each record's creation time is read several times during a walk),
 * so each field remembers its last text and value instead of parsing it again.
 */
import type { Operation } from "../contract/index.js";

class LastParsed {
  private text = "";
  private ms = NaN;

  parse(text: string): number {
    if (text !== this.text) {
      this.text = text;
      this.ms = Date.parse(text);
    }
    return this.ms;
  }
}

const created = new LastParsed();
const updated = new LastParsed();

/** `created_at` in epoch ms. Invalid timestamps fell at validation. */
export function createdAtMs(record: Pick<Operation, "created_at">): number {
  return created.parse(record.created_at);
}

/** `updated_at` in epoch ms. */
export function updatedAtMs(record: Pick<Operation, "updated_at">): number {
  return updated.parse(record.updated_at);
}
