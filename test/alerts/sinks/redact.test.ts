/**
 * The redactor, the last line of defence for secrets in what sinks and the status page show:
 * by value, as whole values, never inside an ordinary word that happens to contain a path
 * segment of a webhook URL. (Pure: the e2e secrets test covers every output of the daemon.)
 */
import { describe, expect, it } from "vitest";
import { createRedactor, urlSecrets } from "../../../src/config/redact.js";

const url = new URL(
  "https://hooks.example/redirect/services/T0SECRET123/B0SECRET456?token=TOKEN789xyz",
);
const redact = createRedactor(urlSecrets(url));

describe("redaction", () => {
  it("leaves ordinary words that contain a path segment alone", () => {
    expect(redact("HTTP 301 (redirects are not followed)")).toBe(
      "HTTP 301 (redirects are not followed)",
    );
    // A segment on its own is a value of the secret URL, though: that is redacted.
    expect(redact("the services segment")).toBe("the [redacted] segment");
  });

  it("redacts every secret value where it stands, in any case and in any company", () => {
    expect(redact(`POST ${url.href} failed`)).toBe("POST [redacted] failed");
    expect(redact("token=TOKEN789xyz")).toBe("token=[redacted]");
    expect(redact("path /redirect/services/T0SECRET123/B0SECRET456 refused")).not.toMatch(
      /T0SECRET123|B0SECRET456/,
    );
    expect(redact("id t0secret123, then b0secret456.")).toBe("id [redacted], then [redacted].");
  });
});
