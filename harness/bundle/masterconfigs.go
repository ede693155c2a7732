package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// defaultReadPageSize is the reference master's oplog_read_page_size when
// its config does not set one (impl/master/CONTRACT.md).
const defaultReadPageSize = 256

// readMasterConfigs reads the master configs the harness wrote and the
// bundle keeps under logs/ (any YAML file there with node_id and
// advertise_url). It maps each master's advertise_url to its node_id: the
// election candidate keys carry the first, the maintenance lease's owner
// tokens the second (audit.Input.Advertised; nil when the bundle holds no
// config). And it returns the largest OpLog reader page size they set
// (audit.Input.ReadPageSize; 0 without configs).
func readMasterConfigs(dir string) (map[string]string, int, error) {
	root := filepath.Join(dir, LogsDir)
	if _, err := os.Stat(root); err != nil {
		return nil, 0, nil
	}
	var out map[string]string
	page := 0
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
			PageSize  int    `yaml:"oplog_read_page_size"`
		}
		if yaml.Unmarshal(data, &cfg) != nil || cfg.NodeID == "" || cfg.Advertise == "" {
			return nil // not a master config
		}
		if cfg.PageSize <= 0 {
			cfg.PageSize = defaultReadPageSize
		}
		page = max(page, cfg.PageSize)
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
		return nil, 0, fmt.Errorf("master configs: %w", err)
	}
	return out, page, nil
}
