/**
 * The names of an alert's project, branch and endpoint, beside their ids: looked up when the
 * alert is raised (kept with it in the outbox) and again when it is sent, for a name that was
 * not known yet. A name already on the alert stays: what one receiver was told does not change
 * under the next.
 */
import { MAX_NAME_LENGTH, type Alert } from "../../store/index.js";
import type { NameLookup } from "../../sync/index.js";

/** The alert with the names `names` knows that it does not carry yet. */
export function withNames(alert: Alert, names: NameLookup | undefined): Alert {
  if (names === undefined) return alert;
  const { projectId, branchId, endpointId } = alert;
  const projectName = alert.projectName ?? names.projectName(projectId);
  const branchName =
    alert.branchName ??
    (branchId === undefined ? undefined : names.branchName(projectId, branchId));
  const endpointName =
    alert.endpointName ??
    (endpointId === undefined ? undefined : names.endpointName(projectId, endpointId));
  if (
    projectName === alert.projectName &&
    branchName === alert.branchName &&
    endpointName === alert.endpointName
  ) {
    return alert;
  }
  return {
    ...alert,
    ...nameField("projectName", projectName),
    ...nameField("branchName", branchName),
    ...nameField("endpointName", endpointName),
  };
}

function nameField<K extends "projectName" | "branchName" | "endpointName">(
  key: K,
  name: string | undefined,
): Partial<Record<K, string>> {
  if (name === undefined || name === "") return {};
  return { [key]: name.slice(0, MAX_NAME_LENGTH) } as Partial<Record<K, string>>;
}
