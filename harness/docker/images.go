package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// LabelBinary is the SHA-256 of the binary an image runs: an image is
// reused only while it runs the same binary.
const LabelBinary = "oplogha.binary-sha256"

// ImageRef is the tag of a tool's image.
func ImageRef(name, version string) string { return "oplogha/" + name + ":" + version }

// dockerfile: nothing but the static binary and an empty /tmp.
const dockerfile = `FROM scratch
COPY tmp /tmp
COPY prog /prog
LABEL ` + LabelBinary + `="%s"
ENTRYPOINT ["/prog"]
`

// EnsureImage builds the image ref around binary (whose SHA-256 is sum)
// unless an image of that tag already runs that binary. It says whether it
// built, and how long that took.
func EnsureImage(ctx context.Context, ref, binary, sum string, log io.Writer) (built bool, took time.Duration, err error) {
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(logger{log}))
	if err != nil {
		return false, 0, fmt.Errorf("docker: %w", err)
	}
	defer p.Close()
	if in, err := p.Client().ImageInspect(ctx, ref); err == nil && in.Config != nil && in.Config.Labels[LabelBinary] == sum {
		return false, 0, nil
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "oplogha-image-")
	if err != nil {
		return false, 0, err
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o1777); err != nil {
		return false, 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(fmt.Sprintf(dockerfile, sum)), 0o644); err != nil {
		return false, 0, err
	}
	if err := os.Link(binary, filepath.Join(dir, "prog")); err != nil {
		if err := copyFile(binary, filepath.Join(dir, "prog")); err != nil {
			return false, 0, err
		}
	}
	repo, tag := splitRef(ref)
	if log == nil {
		log = io.Discard
	}
	req := testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: dir, Dockerfile: "Dockerfile", Repo: repo, Tag: tag, KeepImage: true, BuildLogWriter: log,
	}}
	if _, err := p.BuildImage(ctx, &req); err != nil {
		return false, 0, fmt.Errorf("docker: build %s: %w", ref, err)
	}
	return true, time.Since(start), nil
}

// RemoveImage removes one tag (a run's own image).
func RemoveImage(ctx context.Context, ref string) error {
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(logger{}))
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = p.Client().ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	return err
}

func splitRef(ref string) (repo, tag string) {
	for i := len(ref) - 1; i >= 0; i-- {
		switch ref[i] {
		case ':':
			return ref[:i], ref[i+1:]
		case '/':
			return ref, "latest"
		}
	}
	return ref, "latest"
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
