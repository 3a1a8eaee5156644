/**
 * The daemon sets V8's heap growing factor unless the operator gave node one: the decision
 * reads node's own flags as `process.execArgv` holds them. (What the factor saves is measured
 * by `npm run bench`, not asserted here.)
 */
import { describe, expect, it } from "vitest";
import { heapGrowthChosen } from "../../src/exporter/index.js";

describe("whether the operator chose the heap growing factor", () => {
  it("is so for the flag in either spelling, with its value joined or apart", () => {
    expect(heapGrowthChosen(["--heap-growing-percent=100"])).toBe(true);
    expect(heapGrowthChosen(["--max-old-space-size=512", "--heap_growing_percent=50"])).toBe(true);
    expect(heapGrowthChosen(["--heap-growing-percent", "100"])).toBe(true);
  });

  it("is not so for other flags, or for none", () => {
    expect(heapGrowthChosen([])).toBe(false);
    expect(heapGrowthChosen(["--max-old-space-size=512", "--expose-gc"])).toBe(false);
    expect(heapGrowthChosen(["--heap-growing-percentage=5"])).toBe(false);
  });
});
