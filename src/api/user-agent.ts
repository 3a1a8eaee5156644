import { PACKAGE } from "../version.js";

/** `pgcp-exporter/<version>`. */
export const DEFAULT_USER_AGENT = `${PACKAGE.name}/${PACKAGE.version}`;
