import { createHash } from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";

/**
 * The provenance of a state machine's definitions: every version records who
 * created it (the API key's name, when there was one), when, its definition
 * hash, and the hash of the version before it, so the versions form a chain of
 * their own: `hash = SHA-256(canonical {name, version, definitionHash,
 * createdAt, createdBy, previous})`, `previous` = the previous version's hash
 * ('' for the first version of a machine). The audit export carries the chain
 * up to the execution's version; `stepwise audit verify` recomputes it.
 *
 * Stored in the version hash (`keys.machineVersion`): `by` (creator), `vh` (this
 * hash), `pvh` (previous). Versions created before this existed have none: the
 * chain starts at the first version that has one.
 */
export interface VersionLink {
  name: string;
  version: number;
  definitionHash: string;
  createdAt: string;
  /** The API key's name; '' when the runtime was called directly. */
  createdBy: string;
  previous: string;
  hash: string;
}

export function versionHash(link: Omit<VersionLink, "hash">): string {
  const { name, version, definitionHash, createdAt, createdBy, previous } = link;
  return createHash("sha256")
    .update(canonicalJson({ name, version, definitionHash, createdAt, createdBy, previous }))
    .digest("hex");
}

/** The first link (in version order) that does not hash or does not follow the one before; undefined when whole. */
export function brokenVersionLink(links: readonly VersionLink[]): VersionLink | undefined {
  let previous: string | undefined;
  for (const link of links) {
    if (versionHash(link) !== link.hash) return link;
    if (previous !== undefined && link.previous !== previous) return link;
    previous = link.hash;
  }
  return undefined;
}
