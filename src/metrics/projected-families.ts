/** Every projected family of the catalogue, by name (a missing one does not compile). */
import { alertProjections } from "./alert-series.js";
import { endpointProjections } from "./endpoint-series.js";
import { leaseProjections } from "./lease-series.js";
import { operationProjections } from "./operation-series.js";
import type { Projections } from "./projected-family.js";
import { projectProjections } from "./project-series.js";
import { runtimeProjections } from "./runtime-series.js";

export const PROJECTIONS: Projections = {
  ...operationProjections,
  ...endpointProjections,
  ...projectProjections,
  ...runtimeProjections,
  ...alertProjections,
  ...leaseProjections,
};
