package bin

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/mod/modfile"
)

// Tool is one external program the harness runs.
type Tool struct {
	Name    string // binary name in the cache, e.g. "etcd"
	Package string // main package to build
	Module  string // module whose version in go.mod is the tool's version
}

// Tools are the pinned tools. Their packages must appear as `tool` lines in go.mod.
var Tools = []Tool{
	{Name: "etcd", Package: "go.etcd.io/etcd/server/v3", Module: "go.etcd.io/etcd/server/v3"},
	{Name: "toxiproxy", Package: "github.com/Shopify/toxiproxy/v2/cmd/server", Module: "github.com/Shopify/toxiproxy/v2"},
	{Name: "versitygw", Package: "github.com/versity/versitygw/cmd/versitygw", Module: "github.com/versity/versitygw"},
	{Name: "gotestsum", Package: "gotest.tools/gotestsum", Module: "gotest.tools/gotestsum"},
	{Name: "gofakes3", Package: "github.com/johannesboyne/gofakes3/cmd/gofakes3", Module: "github.com/johannesboyne/gofakes3"},
}

// Lookup returns the tool called name.
func Lookup(name string) (Tool, error) {
	for _, t := range Tools {
		if t.Name == name {
			return t, nil
		}
	}
	names := make([]string, 0, len(Tools))
	for _, t := range Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return Tool{}, fmt.Errorf("unknown tool %q (known: %v)", name, names)
}

// ProjectRoot finds the directory holding the project's go.mod, walking up
// from dir.
func ProjectRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modfile.ModulePath(data) == ModulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod of module %s above %s", ModulePath, dir)
		}
		d = parent
	}
}

// ModulePath is the project's module path.
const ModulePath = "github.com/oplogha/oplogha"

// PinnedVersions reads the version of every tool's module from go.mod and
// checks that each tool package has a `tool` line.
func PinnedVersions(root string) (map[string]string, error) {
	path := filepath.Join(root, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mf, err := modfile.Parse(path, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	versions := map[string]string{}
	for _, r := range mf.Require {
		versions[r.Mod.Path] = r.Mod.Version
	}
	tools := map[string]bool{}
	for _, t := range mf.Tool {
		tools[t.Path] = true
	}
	out := map[string]string{}
	for _, t := range Tools {
		v, ok := versions[t.Module]
		if !ok {
			return nil, fmt.Errorf("%s: no require line for %s (tool %s)", path, t.Module, t.Name)
		}
		if !tools[t.Package] {
			return nil, fmt.Errorf("%s: no tool line for %s", path, t.Package)
		}
		out[t.Name] = v
	}
	return out, nil
}
