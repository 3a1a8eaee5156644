/**
 * A URL as logs, `check-config` and the status page show it: scheme, host and path only. User
 * names, passwords, query parameters (`?token=…`) and fragments can hold secrets, so none of
 * them is shown. The store's function, which names the Postgres store's database the same way.
 */
export { displayUrl } from "../store/index.js";
