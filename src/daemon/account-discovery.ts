/**
 * Lists the projects one account watches: the ids it names, every project of its own account
 * (`all`), and every project of each organisation it names (`GET /projects?org_id=`), in that
 * order, each once; with what the listings said of each project they had (its name, region,
 * organisation), which is then shown beside its id at no further cost.
 */
import type { ApiClient, SkippedProject } from "../api/index.js";
import type { AccountProjects } from "../config/index.js";
import type { ProjectListItem } from "../contract/index.js";

/** The largest page the projects list allows: discovery of thousands takes few requests. */
const PAGE = 400;

export async function discoverAccountProjects(
  client: Pick<ApiClient, "allProjects">,
  projects: AccountProjects,
  onSkipped: (skipped: SkippedProject, orgId: string | undefined) => void,
): Promise<{ ids: string[]; listed: ProjectListItem[] }> {
  const ids = new Set(projects.ids);
  const listed: ProjectListItem[] = [];
  const listings: (string | undefined)[] = [...(projects.all ? [undefined] : []), ...projects.orgs];
  for (const orgId of listings) {
    const walk = {
      limit: PAGE,
      orgId,
      onSkipped: (s: SkippedProject) => {
        onSkipped(s, orgId);
      },
    };
    for await (const project of client.allProjects(walk)) {
      ids.add(project.id);
      listed.push(project);
    }
  }
  return { ids: [...ids], listed };
}
