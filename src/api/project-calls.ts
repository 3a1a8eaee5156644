/**
 * The client's listing of the projects an API key can see (its account's own, or an
 * organisation's): one page, or every page. An entry that is not a usable project is skipped
 * and said so, not a failure of the page. Also what the exporter shows of one project: the
 * project itself, its branches, its organisation.
 */
import type { z } from "zod";
import {
  PROJECTS_LIMIT,
  branchesResponseSchema,
  organizationSchema,
  projectListItemSchema,
  projectResponseSchema,
  projectsPageEntriesSchema,
  type ProjectListItem,
} from "../contract/index.js";
import type { Call } from "./call.js";
import type { ApiClient, CallOptions, SkippedProject } from "./client.js";
import { checkLimit, pageIsConsistent, walkPages, withCursor } from "./paging.js";
import { paths, type RouteName } from "./routes.js";

export function projectCalls(
  call: Call,
): Pick<
  ApiClient,
  "listProjects" | "allProjects" | "getProject" | "listBranches" | "getOrganization"
> {
  const listProjects: ApiClient["listProjects"] = async (page, callOptions) => {
    const limit = page?.limit ?? PROJECTS_LIMIT.default;
    checkLimit("projects", limit, PROJECTS_LIMIT);
    const read = await call({
      route: "listProjects",
      method: "GET",
      path: paths.projects(),
      query: { limit, cursor: page?.cursor, org_id: page?.orgId },
      schema: projectsPageEntriesSchema,
      check: pageIsConsistent(page?.cursor, limit, (p) => p.projects.length),
      signal: callOptions?.signal,
    });
    const projects: ProjectListItem[] = [];
    const skipped: SkippedProject[] = [];
    for (const entry of read.projects) {
      const parsed = projectListItemSchema.safeParse(entry);
      if (parsed.success) projects.push(parsed.data);
      else skipped.push(skippedProject(entry, parsed.error));
    }
    return { ...read, projects, skipped };
  };
  /** A read of one resource, checked against its schema. */
  const get = <T>(route: RouteName, path: string, schema: z.ZodType<T>, o?: CallOptions) =>
    call({ route, method: "GET", path, schema, signal: o?.signal });
  return {
    listProjects,
    getProject: async (projectId, o) =>
      (await get("getProject", paths.project(projectId), projectResponseSchema, o)).project,
    listBranches: async (projectId, o) =>
      (await get("listBranches", paths.branches(projectId), branchesResponseSchema, o)).branches,
    getOrganization: (orgId, o) =>
      get("getOrganization", paths.organization(orgId), organizationSchema, o),
    async *allProjects(walk, callOptions) {
      const limit = walk?.limit ?? PROJECTS_LIMIT.default;
      checkLimit("projects", limit, PROJECTS_LIMIT);
      const pages = walkPages(
        (cursor) =>
          listProjects({ ...withCursor({ limit }, cursor), orgId: walk?.orgId }, callOptions),
        (page) => page.projects.length + page.skipped.length,
        limit,
        walk?.startCursor,
      );
      for await (const page of pages) {
        for (const skipped of page.skipped) walk?.onSkipped?.(skipped);
        yield* page.projects;
      }
    },
  };
}

function skippedProject(entry: unknown, error: z.ZodError): SkippedProject {
  const id = (entry as { id?: unknown } | null)?.id;
  const issue = error.issues[0];
  return {
    id:
      id === undefined
        ? "(none)"
        : JSON.stringify((typeof id === "string" ? id : JSON.stringify(id)).slice(0, 100)),
    problem:
      issue === undefined
        ? "does not match the schema"
        : `${issue.path.map(String).join(".") || "(entry)"}: ${issue.message}`,
  };
}
