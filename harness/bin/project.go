package bin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildProject builds one of the project's own commands (e.g. "./cmd/master")
// into out, with build tags when given. Go's build cache makes a rebuild of
// unchanged code take a moment, so each run builds the master it tests from
// the tree it runs in.
func BuildProject(ctx context.Context, root, pkg, out string, tags ...string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + fmt.Sprintf(".tmp-%d", os.Getpid())
	defer os.Remove(tmp)
	args := []string{"build", "-o", tmp}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %v: %s", pkg, err, strings.TrimSpace(buf.String()))
	}
	return os.Rename(tmp, out)
}
