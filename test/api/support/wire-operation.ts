/**
 * An operation as the API sends it (the wire's snake_case fields): running, never failed. Tests
 * of the client and of response reading spread it and change the fields they are about.
 */
export const WIRE_OPERATION = {
  id: "0b7a4d5e-6f00-4a6c-9d6e-1f2a3b4c5d6e",
  project_id: "p-1",
  branch_id: "br-1",
  action: "start_compute",
  status: "running",
  failures_count: 0,
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
};
