// Package mutants is the suite's standing check of itself: a corpus of
// realistic one-line bugs in impl/ (patch files under tests/mutants), each
// applied to a private copy of the tree, built, and run against the
// scenarios and package tests it names. A mutant is killed when a scenario
// it names fails; one that only a package test catches is a harness gap,
// and one nothing catches survived. A harness is worth the bugs it catches.
package mutants

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Mutant is one patch of the corpus with its header.
type Mutant struct {
	Name  string // file name without .patch
	Path  string
	Where string // the package it breaks
	Story string // the bug, as a developer could write it
	// Scenarios (pr tier file names without .yaml) and Tests (package
	// patterns) that should kill it, in the order they are tried.
	Scenarios []string
	Tests     []string
	Diff      []byte
}

// Header keys a patch file starts with, one "# key: value" line each.
const (
	keyWhere     = "where"
	keyStory     = "story"
	keyScenarios = "scenarios"
	keyTests     = "tests"
)

// ErrHeader: a patch file's header is missing something or malformed.
var ErrHeader = errors.New("mutant header")

// Load reads every *.patch in dir, sorted by name.
func Load(dir string) ([]Mutant, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.patch in %s", dir)
	}
	out := make([]Mutant, 0, len(files))
	for _, f := range files {
		m, err := Parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Parse reads one patch file: "# key: value" lines, then the unified diff.
func Parse(path string) (Mutant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Mutant{}, err
	}
	m := Mutant{Name: strings.TrimSuffix(filepath.Base(path), ".patch"), Path: path}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if !strings.HasPrefix(t, "# ") {
			break
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(t, "# "), ":")
		if !ok {
			return m, fmt.Errorf("%w: %s:%d: want \"# key: value\"", ErrHeader, path, line)
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case keyWhere:
			m.Where = v
		case keyStory:
			m.Story = v
		case keyScenarios:
			m.Scenarios = fields(v)
		case keyTests:
			m.Tests = fields(v)
		default:
			return m, fmt.Errorf("%w: %s:%d: unknown key %q", ErrHeader, path, line, k)
		}
	}
	if i := bytes.Index(data, []byte("\ndiff --git ")); i >= 0 {
		m.Diff = data[i+1:]
	} else if bytes.HasPrefix(data, []byte("diff --git ")) {
		m.Diff = data
	}
	switch {
	case m.Where == "" || m.Story == "":
		return m, fmt.Errorf("%w: %s: needs where and story", ErrHeader, path)
	case len(m.Scenarios) == 0:
		return m, fmt.Errorf("%w: %s: names no scenario (a mutant only a unit test catches is a harness gap)", ErrHeader, path)
	case len(m.Diff) == 0:
		return m, fmt.Errorf("%w: %s: no diff after the header", ErrHeader, path)
	}
	return m, nil
}

func fields(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
}
