/**
 * How the baselines read the simulator's API: GETs through a pool of undici connections, with
 * the bearer key, each answer parsed with `JSON.parse`, and nothing else.
 */
import { Pool } from "undici";

export interface ApiReader {
  /** GETs `path` (below the API's base path) and parses the answer; throws unless it is a 200. */
  get(path: string): Promise<unknown>;
  close(): Promise<void>;
}

export function apiReader(apiUrl: string, apiKey: string, connections: number): ApiReader {
  const url = new URL(apiUrl);
  const base = url.pathname.replace(/\/$/, "");
  const pool = new Pool(url.origin, { connections });
  const headers = { authorization: `Bearer ${apiKey}`, accept: "application/json" };
  return {
    async get(path) {
      const response = await pool.request({ method: "GET", path: `${base}${path}`, headers });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode}`);
      return JSON.parse(text) as unknown;
    },
    close: () => pool.close(),
  };
}
