package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/docker"
	"github.com/oplogha/oplogha/harness/proc"
)

// runtime is where this run's cluster runs: the option, else the
// scenario's, else process.
func (r *run) runtime() string {
	switch {
	case r.opts.Runtime != "":
		return r.opts.Runtime
	case r.sc.Runtime != "":
		return r.sc.Runtime
	}
	return "process"
}

var unsafeName = regexp.MustCompile(`[^a-z0-9_.-]+`)

// useDocker puts the run on the docker runtime: images for every binary,
// the run's network, and the group's launcher. The run's work directory
// (and a legacy fixture's root) is bound into every container.
func (r *run) useDocker(ctx context.Context, group *proc.Group, bins cluster.Binaries) error {
	if err := docker.Available(ctx); err != nil {
		return err
	}
	runID := "oplogha-" + unsafeName.ReplaceAllString(strings.ToLower(filepath.Base(r.dir)), "-")
	images, own, err := cluster.DockerImages(ctx, bins, runID, r.opts.PublicImages, r.opts.Progress)
	if err != nil {
		for _, ref := range own {
			_ = docker.RemoveImage(ctx, ref)
		}
		return err
	}
	mounts := []string{r.work}
	if li := r.sc.Cluster.LegacyImport; li != nil {
		if root, err := filepath.Abs(li.Root); err == nil {
			mounts = append(mounts, root)
		}
	}
	logs := filepath.Join(r.work, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	dlog, err := os.Create(filepath.Join(logs, "docker.log"))
	if err != nil {
		return err
	}
	eng, err := docker.New(ctx, docker.Options{RunID: runID, Mounts: mounts, Images: images, RemoveImages: own, Log: dlog})
	if err != nil {
		for _, ref := range own {
			_ = docker.RemoveImage(ctx, ref)
		}
		return err
	}
	group.Launcher = eng
	r.dockerRun = runID
	return nil
}
