// Package jsoncpp reads and writes JSON as upstream Mooncake does, with
// jsoncpp 1.9.5: Parse is the reader behind the batch record, the durable
// prefix and the compaction floor (CharReaderBuilder at its defaults);
// ParseStrict is the reader behind the batch-OpLog snapshot's descriptor
// and manifest (comments refused, nothing after the value, duplicate names
// refused, an object or array at the root), with jsoncpp's own error texts
// and its error recovery; Append and AppendString write what jsoncpp's
// StreamWriterBuilder writes with indentation "" (members sorted, ASCII
// only), byte for byte, which the batch record's checksum depends on.
//
// Values keep the distinctions jsoncpp makes (an integer literal that fits
// int64 is Int, a larger one Uint, anything else Real), so a decoder can
// apply jsoncpp's isUInt/isUInt64/isInt64 tests exactly.
package jsoncpp
