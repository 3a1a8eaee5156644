/**
 * Lists the projects one account watches: the ids it names, every project of its own account
 * (`all`), and every project of each organisation it names (`GET /projects?org_id=`), in that
 * order, each once.
 */
import type { ApiClient, SkippedProject } from "../api/index.js";
import type { AccountProjects } from "../config/index.js";

/** The largest page the projects list allows: discovery of thousands takes few requests. */
const PAGE = 400;

export async function discoverAccountProjects(
  client: Pick<ApiClient, "allProjects">,
  projects: AccountProjects,
  onSkipped: (skipped: SkippedProject, orgId: string | undefined) => void,
): Promise<string[]> {
  const ids = new Set(projects.ids);
  const listings: (string | undefined)[] = [...(projects.all ? [undefined] : []), ...projects.orgs];
  for (const orgId of listings) {
    const walk = {
      limit: PAGE,
      orgId,
      onSkipped: (s: SkippedProject) => {
        onSkipped(s, orgId);
      },
    };
    for await (const project of client.allProjects(walk)) ids.add(project.id);
  }
  return [...ids];
}
