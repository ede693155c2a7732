package batchsnap

import (
	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// Descriptor is descriptor.json, the object a pointer leads to
// (metadata.h BatchOpLogSnapshotDescriptor): the identity and where the
// manifest is, with its exact size and CRC32C. It is jsoncpp's compact JSON,
// members sorted by name, no newline at the end:
//
//	{"created_at_ms":1767225600000,"last_included_batch_id":42,"last_included_seq":1000,
//	 "manifest_crc32c":489438026,"manifest_key":"snapshots/batch-oplog/42-7/manifest.json",
//	 "manifest_size":911,"producer_view_version":3,"schema_version":1,
//	 "snapshot_format":"standby-oplog-materialized/v1","snapshot_id":"42-7"}
type Descriptor struct {
	Identity
	ManifestKey    string
	ManifestSize   uint64
	ManifestCRC32C uint32
	CreatedAtMS    int64
}

// Validate applies upstream's decoder's checks to d.
func (d Descriptor) Validate() error {
	if err := d.Identity.validate(); err != nil {
		return err
	}
	if d.ManifestKey == "" || d.ManifestSize == 0 || d.CreatedAtMS < 0 {
		return fail(ErrMalformed, "manifest key and size must be non-zero and created_at_ms non-negative")
	}
	return nil
}

// Encode writes d as upstream's EncodeBatchOpLogSnapshotDescriptor does. It
// refuses what upstream's decoder would refuse (upstream's encoder checks
// nothing), so nothing unreadable is ever stored.
func (d Descriptor) Encode() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d.encode(), nil
}

func (d Descriptor) encode() []byte {
	root := jsoncpp.Value{Kind: jsoncpp.Object}
	d.Identity.encode(&root)
	root.Set("manifest_key", str(d.ManifestKey))
	root.Set("manifest_size", u64(d.ManifestSize))
	root.Set("manifest_crc32c", u64(uint64(d.ManifestCRC32C)))
	root.Set("created_at_ms", i64(d.CreatedAtMS))
	return jsoncpp.Append(nil, &root)
}

// DecodeDescriptor is upstream's DecodeBatchOpLogSnapshotDescriptor: the
// same acceptance (jsoncpp's leniency included: whitespace, a BOM, a
// trailing comma, unknown members, integral doubles) and the same reasons,
// in upstream's order. Failures are ErrMalformed or ErrVersion.
func DecodeDescriptor(data []byte) (Descriptor, error) {
	root, err := parseObject(data)
	if err != nil {
		return Descriptor{}, err
	}
	f := &fields{obj: &root}
	id, err := decodeIdentity(f)
	if err != nil {
		return Descriptor{}, err
	}
	d := Descriptor{Identity: id}
	d.ManifestKey = f.str("manifest_key")
	d.ManifestSize = f.u64("manifest_size")
	d.ManifestCRC32C = f.u32("manifest_crc32c")
	d.CreatedAtMS = f.i64("created_at_ms")
	if f.reason != "" {
		return Descriptor{}, fail(ErrMalformed, f.reason)
	}
	if err := d.Validate(); err != nil {
		return Descriptor{}, err
	}
	return d, nil
}
