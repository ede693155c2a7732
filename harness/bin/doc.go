// Package bin builds the external programs the harness runs (etcd, toxiproxy,
// versitygw, gofakes3, gotestsum) from the versions pinned by the `tool`
// lines of the project's go.mod, into a cache directory, once per version.
//
// A binary is built with `go build` inside the project module, so its
// dependency versions are exactly those recorded in go.mod and go.sum. The
// cache key is the tool's module version; a build goes to a temporary file and
// is renamed into place, under a file lock, so parallel runs share one build.
package bin
