package oplog

import "github.com/oplogha/oplogha/impl/contract"

// Floor is the compaction floor record (contract.Floor): the highest batch
// id readers must assume may have been deleted. It never decreases.
type Floor = contract.Floor

// DecodeFloor decodes a compaction floor record (contract.DecodeFloor),
// with this package's error kinds.
func DecodeFloor(data []byte) (Floor, error) {
	f, err := contract.DecodeFloor(data)
	if err != nil {
		return Floor{}, codecErr(err)
	}
	return f, nil
}
