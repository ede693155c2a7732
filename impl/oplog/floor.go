package oplog

import "github.com/oplogha/oplogha/impl/contract/batchsnap"

// Floor is the compaction floor record (batchsnap.Floor): the highest batch
// id readers must assume may have been deleted. It never decreases.
type Floor = batchsnap.Floor

// DecodeFloor decodes a compaction floor record (batchsnap.DecodeFloor),
// with this package's error kinds.
func DecodeFloor(data []byte) (Floor, error) {
	f, err := batchsnap.DecodeFloor(data)
	if err != nil {
		return Floor{}, codecErr(err)
	}
	return f, nil
}
