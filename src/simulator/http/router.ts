/** The outcome of matching a request against the route table. */
export type RouteMatch<H> =
  | {
      readonly kind: "found";
      readonly name: string;
      readonly handler: H;
      readonly params: Readonly<Record<string, string>>;
    }
  | { readonly kind: "method-not-allowed"; readonly name: string; readonly allow: string[] }
  | { readonly kind: "not-found" };

interface Route<H> {
  readonly method: string;
  readonly segments: readonly string[];
  readonly name: string;
  readonly handler: H;
}

function split(path: string): string[] | undefined {
  try {
    return path
      .split("/")
      .filter((s) => s.length > 0)
      .map(decodeURIComponent);
  } catch {
    return undefined; // malformed percent-encoding
  }
}

/** A small method-and-path router; `:name` segments capture parameters. */
export class Router<H> {
  private readonly routes: Route<H>[] = [];

  add(method: string, pattern: string, name: string, handler: H): this {
    this.routes.push({ method, segments: split(pattern) ?? [], name, handler });
    return this;
  }

  match(method: string, path: string): RouteMatch<H> {
    const segments = split(path);
    if (segments === undefined) return { kind: "not-found" };
    const allow: string[] = [];
    let name: string | undefined;
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (params === undefined) continue;
      if (route.method === method) {
        return { kind: "found", name: route.name, handler: route.handler, params };
      }
      allow.push(route.method);
      name ??= route.name;
    }
    return name === undefined ? { kind: "not-found" } : { kind: "method-not-allowed", name, allow };
  }
}

function matchSegments(
  pattern: readonly string[],
  actual: readonly string[],
): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i] ?? "";
    const value = actual[i] ?? "";
    if (expected.startsWith(":")) params[expected.slice(1)] = value;
    else if (expected !== value) return undefined;
  }
  return params;
}
