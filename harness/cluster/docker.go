package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/oplogha/oplogha/harness/docker"
)

// Public images a user with a registry may run instead of the local builds
// (the images testcontainers-go's etcd and toxiproxy modules use), with
// where their program is. Never the default: these machines reach no registry.
var PublicImages = map[string]docker.Image{
	"etcd":      {Ref: "gcr.io/etcd-development/etcd:v3.7.3", Entrypoint: []string{"/usr/local/bin/etcd"}},
	"toxiproxy": {Ref: "ghcr.io/shopify/toxiproxy:2.12.0", Entrypoint: []string{"/toxiproxy"}},
}

// DockerImages makes sure an image runs each binary of bins: the tools'
// images are built once per version and reused (oplogha/{name}:{version});
// the master, built from the tree for this run, gets an image of the run's
// own (runImages, to remove at the end). With public, etcd and toxiproxy run
// from PublicImages instead.
func DockerImages(ctx context.Context, bins Binaries, runID string, public bool, progress io.Writer) (byPath map[string]docker.Image,
	runImages []string, err error) {
	byPath = map[string]docker.Image{}
	for _, b := range []BinaryInfo{bins.Etcd, bins.Toxiproxy, bins.Versity, bins.FakeS3} {
		if img, ok := PublicImages[b.Name]; ok && public {
			byPath[b.Path] = img
			continue
		}
		ref := docker.ImageRef(b.Name, b.Version)
		built, took, err := docker.EnsureImage(ctx, ref, b.Path, b.SHA256, nil)
		if err != nil {
			return nil, nil, err
		}
		if built && progress != nil {
			fmt.Fprintf(progress, "image %s built in %v\n", ref, took.Round(1e6))
		}
		byPath[b.Path] = docker.Image{Ref: ref}
	}
	// The master and the peer switch are built from the tree the run
	// tests: images of the run's own, removed with it.
	var own []string
	for _, b := range []BinaryInfo{bins.Master, bins.PeerSwitch} {
		if b.Path == "" {
			continue
		}
		ref := "oplogha-run/" + b.Name + ":" + strings.ToLower(runID)
		if _, _, err := docker.EnsureImage(ctx, ref, b.Path, b.SHA256, nil); err != nil {
			return nil, own, err
		}
		byPath[b.Path] = docker.Image{Ref: ref}
		own = append(own, ref)
	}
	return byPath, own, nil
}
