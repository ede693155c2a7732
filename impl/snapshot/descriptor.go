package snapshot

import "github.com/oplogha/oplogha/impl/contract"

// DescriptorSchemaVersion is the schema of descriptors this package writes.
const DescriptorSchemaVersion = contract.DescriptorSchemaVersion

// Descriptor is a snapshot's descriptor (RFC "Descriptor"), the contract's
// record (contract.Descriptor, with its Encode, Validate, Agree, Pointer
// and Legacy). A legacy descriptor decodes with SchemaVersion 0 and zero
// values in every new field.
type Descriptor = contract.Descriptor

// DecodeDescriptor decodes a schema-v1 JSON descriptor (strict: no unknown
// fields) or a legacy `<last_included_seq>|<producer_view_version>|<created_at_ms>`
// (contract.DecodeDescriptor).
func DecodeDescriptor(data []byte) (Descriptor, error) { return contract.DecodeDescriptor(data) }

// EncodeLegacy renders the legacy three-field form (fixtures and tests only:
// writers never emit it).
func EncodeLegacy(seq, view uint64, createdAtMS int64) []byte {
	return contract.EncodeLegacyDescriptor(seq, view, createdAtMS)
}
