import type { EndpointSettings } from "./state.js";

/**
 * The endpoint fields a client sets besides branch, type, sizes and auto-suspend: stored and
 * answered as set. Only `disabled` changes what the compute does (see endpoint-service.ts).
 */

/** What the real API answers for a new endpoint when the request sets none of them. */
export const DEFAULT_ENDPOINT_SETTINGS: EndpointSettings = {
  name: undefined,
  disabled: false,
  poolerEnabled: false,
  poolerMode: "transaction",
  pgSettings: {},
  provisioner: "k8s-neonvm",
  passwordlessAccess: true,
};

/** The settings fields of a create or update request, as the wire names them. */
export interface SettingsRequest {
  readonly name?: string | undefined;
  readonly disabled?: boolean | undefined;
  readonly pooler_enabled?: boolean | undefined;
  readonly pooler_mode?: "transaction" | undefined;
  readonly settings?: { readonly pg_settings?: Record<string, string> | undefined } | undefined;
  readonly provisioner?: string | undefined;
  readonly passwordless_access?: boolean | undefined;
}

/** The settings after a request: fields it leaves out keep their current values. */
export function applySettings(
  current: EndpointSettings,
  request: SettingsRequest,
): EndpointSettings {
  return {
    name: request.name ?? current.name,
    disabled: request.disabled ?? current.disabled,
    poolerEnabled: request.pooler_enabled ?? current.poolerEnabled,
    poolerMode: request.pooler_mode ?? current.poolerMode,
    pgSettings: request.settings?.pg_settings ?? current.pgSettings,
    provisioner: request.provisioner ?? current.provisioner,
    passwordlessAccess: request.passwordless_access ?? current.passwordlessAccess,
  };
}

/** What an update changed: the name alone is a label; anything else is a configuration change. */
export function settingsChange(
  before: EndpointSettings,
  after: EndpointSettings,
): "none" | "name" | "config" {
  const { name: nameBefore, pgSettings: pgBefore, ...restBefore } = before;
  const { name: nameAfter, pgSettings: pgAfter, ...restAfter } = after;
  const configChanged =
    JSON.stringify(pgBefore) !== JSON.stringify(pgAfter) ||
    (Object.keys(restBefore) as (keyof typeof restBefore)[]).some(
      (k) => restBefore[k] !== restAfter[k],
    );
  if (configChanged) return "config";
  return nameBefore === nameAfter ? "none" : "name";
}
