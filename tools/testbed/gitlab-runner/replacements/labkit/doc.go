// Package labkit is the gpuci.runners testbed's REPLACEMENT for
// gitlab.com/gitlab-org/labkit/v2 (GitLab's service toolkit), which the Go
// module proxy refuses (403). It is not labkit.
//
//   - fields: the log field names GitLab Runner writes. Reached on every log
//     line that names one; the tables of deprecated aliases are empty, so
//     every field keeps the name the runner passes (labkit's legacy names,
//     as with log field schema version 0).
//   - events/snowplow (usage billing events to GitLab's collector): reached
//     only when config.toml configures a Snowplow usage log, which the
//     testbed never does; NewEmitter then fails with ErrNotAvailable and the
//     runner logs that it could not set the usage log up.
package labkit
