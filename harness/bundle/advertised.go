package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// readAdvertised maps each master's advertise_url to its node_id, from the
// master configs the harness wrote and the bundle keeps under logs/ (any
// YAML file there with both keys): the election candidate keys carry the
// first, the maintenance lease's owner tokens the second
// (audit.Input.Advertised). Nil when the bundle holds none.
func readAdvertised(dir string) (map[string]string, error) {
	root := filepath.Join(dir, LogsDir)
	if _, err := os.Stat(root); err != nil {
		return nil, nil
	}
	var out map[string]string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var cfg struct {
			NodeID    string `yaml:"node_id"`
			Advertise string `yaml:"advertise_url"`
		}
		if yaml.Unmarshal(data, &cfg) != nil || cfg.NodeID == "" || cfg.Advertise == "" {
			return nil // not a master config
		}
		if out == nil {
			out = map[string]string{}
		}
		if prev, ok := out[cfg.Advertise]; ok && prev != cfg.NodeID {
			return fmt.Errorf("%s: advertise_url %s is both %s and %s", path, cfg.Advertise, prev, cfg.NodeID)
		}
		out[cfg.Advertise] = cfg.NodeID
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("master configs: %w", err)
	}
	return out, nil
}
