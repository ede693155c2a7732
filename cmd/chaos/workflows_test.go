package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// workflow is what these tests read of a GitHub Actions workflow.
type workflow struct {
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []struct {
			Name string `yaml:"name"`
			If   string `yaml:"if"`
			Run  string `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestWorkflowsLoad: every workflow is valid YAML (a plain scalar with
// ": " in it is not, and CI would refuse the file).
func TestWorkflowsLoad(t *testing.T) {
	files, err := filepath.Glob("../../.github/workflows/*.yml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var w workflow
		require.NoError(t, yaml.Unmarshal(data, &w), f)
		require.NotEmpty(t, w.Jobs, f)
	}
}

// TestNightlyRunsTheUpstreamSwarmOnlyWithABinary: the nightly's upstream
// swarm job runs `make swarm MASTER=mooncake` when MOONCAKE_MASTER names a
// binary, and otherwise says why it did nothing.
func TestNightlyRunsTheUpstreamSwarmOnlyWithABinary(t *testing.T) {
	data, err := os.ReadFile("../../.github/workflows/nightly.yml")
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	job, ok := w.Jobs["upstream-swarm"]
	require.True(t, ok, "no upstream-swarm job")
	require.Contains(t, job.Env["MOONCAKE_MASTER"], "vars.MOONCAKE_MASTER")
	var skip, swarm bool
	for _, s := range job.Steps {
		switch {
		case strings.Contains(s.Run, "make swarm MASTER=mooncake"):
			swarm = true
			require.Equal(t, "env.MOONCAKE_MASTER != ''", s.If)
		case strings.Contains(s.Run, "skipped"):
			skip = true
			require.Equal(t, "env.MOONCAKE_MASTER == ''", s.If)
		}
	}
	require.True(t, swarm && skip)
}
