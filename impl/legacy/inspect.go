package legacy

import "github.com/oplogha/oplogha/impl/contract/legacysnap"

// Inspection is what an import of one legacy snapshot would bring in, and
// what it would leave behind and why. Its JSON form has the fields of the
// golden vectors' expected.json that the files determine (legacysnap.View:
// identity, files, "decoded" and "written_but_not_decoded") plus "import":
// the verdict of this importer.
type Inspection struct {
	legacysnap.View
	Import ImportView `json:"import"`
}

// ImportView is this importer's verdict: "ok" with what comes in, or
// "refused" with why.
type ImportView struct {
	Outcome     string `json:"outcome"`
	Error       string `json:"error,omitempty"`
	Objects     int    `json:"objects"`
	Segments    int    `json:"segments"`
	NotImported []Left `json:"not_imported"`
}

// Inspect describes snapshot snap of clusterID (read by Read; latest is
// what latest.txt names, "" when unread, with its file) and converts it to
// give the import's verdict. It writes nothing.
func Inspect(clusterID string, snap *Snapshot, latest string, latestFile *File) Inspection {
	in := Inspection{View: legacysnap.NewView(clusterID, snap.Snapshot, latest, latestFile)}
	in.Import = ImportView{Outcome: "ok", NotImported: append([]Left{}, NotImported(snap.Decoded)...)}
	conv := *snap
	if err := conv.Convert(); err != nil {
		in.Import.Outcome, in.Import.Error = "refused", err.Error()
	} else {
		in.Import.Objects, in.Import.Segments = conv.Objects, conv.Segments
	}
	return in
}
