package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
)

// The workdir family: a master's local disk.
func init() {
	register(&Kind{Name: "workdir-full", Family: "workdir", Heals: true,
		Doc:   "mount a full 64 KiB tmpfs over a master's snapshot_work_dir (needs mount rights); heal unmounts it",
		check: needsTarget,
		available: func(sh Shape) error {
			if !sh.Mount {
				return errors.New("needs the right to mount (CAP_SYS_ADMIN)")
			}
			return needsSnapshots(sh)
		},
		inject: injectWorkdirFull,
		draw:   func(*rand.Rand, Shape) Spec { return Spec{Kind: "workdir-full", Target: "standby"} },
	})
}

func injectWorkdirFull(ctx context.Context, env Env, s Spec, in *Injected) error {
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	dir, err := env.WorkDir(node)
	if err != nil {
		return err
	}
	if err := fillWorkDir(dir); err != nil {
		return err
	}
	in.Targets = []string{node + " " + dir}
	in.heal = func(context.Context) error { return unmount(dir) }
	return nil
}

// fillWorkDir mounts a 64 KiB tmpfs over dir and fills it, so the master's
// free-space check (and any write) sees a full disk. Mounting needs
// CAP_SYS_ADMIN; without it the fault is unavailable, and says so.
func fillWorkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		return fmt.Errorf("%w: mount a small tmpfs over %s: %v", ErrUnavailable, dir, err)
	}
	f, err := os.Create(filepath.Join(dir, ".harness-fill"))
	if err != nil {
		_ = syscall.Unmount(dir, 0)
		return err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return nil // full
		}
	}
}

func unmount(dir string) error {
	if err := syscall.Unmount(dir, 0); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}
