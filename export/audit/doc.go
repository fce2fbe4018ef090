// Package audit is the registry audit: for each instance with a verdict it checks the
// packages declared in D1 (the after-fix run's D1, with its constraint and pin) against
// their registries and an advisory database, derives the card's security_flags and
// categories, and stores one Record per instance under audits/<instance_id>. The package
// checks (registries, advisories, version orders, the safe-install share) are
// lib/safeinstall's, which scoring uses too.
//
// # What is checked
//
// Packages: every package of the after-fix run's D1, plus those of the before-fix run's
// D1 that the fix changed or dropped. A package is "involved" when the fix adds, changes or
// drops it; flags come from involved packages only (the card: the failure or its fix
// involves a risky package), while the safe-install share covers every declared package.
//
//   - Registry existence, today and at registry_date: PyPI's JSON API
//     (<pypi>/pypi/<name>/json: releases and their upload times), the npm packument
//     (<registry>/<name>: versions, time, time.unpublished; the registry URL comes from
//     `npm config get registry`), Maven Central's search API (<maven>/solrsearch/select
//     with core=gav: versions and timestamps). C++ packages (CMake and pkg-config names)
//     and system packages have no registry here and are recorded as not checked. A 5xx
//     answer, a timeout or an unreadable body is an error of the audit, never "missing".
//     A package that is gone today but was installed by the date-limited run (D2) or has a
//     release older than registry_date existed at registry_date.
//   - Advisories: OSV, by the pinned version or else the version the run installed (D2).
//     In production the OSV API (POST <osv>/v1/querybatch); offline, a local file of OSV
//     records (a JSON array or JSON Lines) matched here as the OSV schema evaluates a
//     record: a version is affected when an affected entry of its ecosystem and package
//     lists it in "versions" or when it lies in any SEMVER or ECOSYSTEM range (GIT ranges
//     are skipped). A range's events are sorted in the range's version order (introduced
//     "0" first, equal versions in the record's order); introduced opens, fixed closes at
//     its version, last_affected closes after it, and limit events cap the range (a
//     limit containing "*" is infinity). The orders are exact: SEMVER ranges and npm use
//     SemVer 2.0.0 precedence (after npm's clean of space, "v" and "="; build metadata
//     ignored); PyPI uses PEP 440 (epochs, zero-padded releases, every pre-, post- and
//     dev-release spelling, local versions); Maven uses Maven 3.9's ComparableVersion
//     (qualifier order, a/b/m shorthands, "-" and "." lists, null trimming). Deliberate
//     fallbacks: a PyPI string that is not PEP 440 sorts before every PEP 440 version and
//     follows the legacy setuptools order among its kind (as OSV's PyPI ecosystem does);
//     a string that is not SemVer is coerced as OSV does (1.2 -> 1.2.0, leading zeros
//     dropped) and sorts just before the valid version of equal precedence, or, if it
//     cannot be coerced, before every version and by its bytes; Maven numbers compare by
//     value and only ASCII digits are digits. Other ecosystems keep a generic order
//     (numbers numerically, common pre-release words before the release), exact only for
//     dotted numbers. A "versions" entry names the query when the strings match, or for
//     PyPI when PEP 440 says the versions are equal, or for npm when they differ only in
//     build metadata or a leading "v" or "=".
//   - Pinning: the D1 entry's Pinned, or an exact version in its spec (==1.2.3,
//     1.2.3 for npm and Maven).
//
// # Flags
//
//   - removed: existed at registry_date (installed by the run, or released before it) but
//     the registry answers 404 today (or npm marks it unpublished); or the version
//     checked (pinned, else installed) is listed as removed: a PyPI release whose files
//     are all yanked (PEP 592, with the yanked reason in the package's version_note) or
//     deleted, an npm version unpublished (its time entry kept, the version gone). Such
//     a package is not a safe install. A version the registry never listed (PyPI's and
//     npm's version lists; Maven Central's when its answer lists every version, at most
//     200) is noted (version_unlisted, version_note) and is not a safe install (the
//     pinned version does not exist), but it is not flagged: the card's removed and
//     nonexistent are about packages (one that disappeared, a name nobody published,
//     which anyone could claim), and only the package's owner could publish the version.
//   - nonexistent: not in the registry at all.
//   - vulnerable: an advisory affects the pinned or installed version.
//   - unpinned: an involved package (one the fix adds or changes) has no version
//     constraint at all in the fixed manifests (Unconstrained: a bare name, "*",
//     "latest", Maven's LATEST/RELEASE). A constraint such as the card's example fix
//     cython<3.0.0 is not unpinned, so that fix stays out of secure. Safe install, the
//     agent score, is the stricter rule: exact pins (PackageResult.Safe).
//
// # Categories
//
// Assigned by rules; each assignment records its rule and evidence:
//
//   - underspecification: the fix adds a package D1 lacked, or its setup.sh installs a
//     system package (apt-get/apt install).
//   - misspecification: the fix changes the version constraint of a package D1 had.
//   - conflict: the before-fix run's output says ResolutionImpossible, ERESOLVE,
//     "conflicting dependencies" or "version conflict".
//   - security: any security flag.
//
// # Record
//
// An audit Record (kind "audit") holds the instance, the runs and verdict it read, the
// upstreams it asked, every package result, "security_flags" and "categories" (plain lists
// in the card's order, as export reads them), "category_rules" and the safe-install share.
// Read returns it.
//
// # Reuse
//
// Run keeps an instance's stored audit, asking nothing, when it read the same verdict,
// asked the same registry and advisory source (for a local OSV file, the same content)
// and is younger than RunOptions.MaxAge (envgap audit: --max-age, 7 days by default;
// --refresh audits everything again, as a release should: advisories change).
package audit
