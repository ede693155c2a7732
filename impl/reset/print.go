package reset

import (
	"fmt"
	"io"
)

func printScan(w io.Writer, s scanResult, maxLines int) {
	if s.empty() {
		fmt.Fprintf(w, "namespace %s is empty at revision %d\n", s.Root, s.Revision)
		return
	}
	if s.Total > 0 {
		fmt.Fprintf(w, "etcd: %d keys under %s/ at revision %d (one linearizable read):\n", s.Total, s.Root, s.Revision)
		for _, n := range classNames() {
			if s.Counts[n] != 0 {
				fmt.Fprintf(w, "  %-26s %d\n", n, s.Counts[n])
			}
		}
	}
	for i, k := range s.Keys {
		if i == maxLines {
			fmt.Fprintf(w, "... and %d more keys\n", len(s.Keys)-maxLines)
			break
		}
		lease := "  lease none"
		switch {
		case k.LeaseUnread:
			lease = "" // a batch key, listed keys only
		case k.Lease != 0:
			lease = fmt.Sprintf("  lease %016x", k.Lease)
		}
		fmt.Fprintf(w, "key %s  [%s]  mod_revision %d%s\n", k.Key, k.Class, k.ModRevision, lease)
	}
	for i, l := range s.Leases {
		if i == maxLines {
			fmt.Fprintf(w, "... and %d more leases\n", len(s.Leases)-maxLines)
			break
		}
		if !l.Alive {
			fmt.Fprintf(w, "lease %016x  expired since the read\n", l.ID)
			continue
		}
		fmt.Fprintf(w, "lease %016x  alive, ttl %ds (granted %ds), %d attached keys in %s/", l.ID, l.TTL, l.Granted, l.Keys, s.Root)
		if len(l.Foreign) > 0 {
			fmt.Fprintf(w, ", %d outside it (first %s)", len(l.Foreign), l.Foreign[0])
		}
		fmt.Fprintln(w)
	}
	for i, o := range s.Objects {
		if i == maxLines {
			fmt.Fprintf(w, "... and %d more objects\n", len(s.Objects)-maxLines)
			break
		}
		if o.UploadID != "" {
			fmt.Fprintf(w, "upload %s  upload id %s  (incomplete multipart upload)\n", o.Key, o.UploadID)
		} else {
			fmt.Fprintf(w, "object %s  %d bytes\n", o.Key, o.Size)
		}
	}
	objs := "objects not checked"
	if s.Checked {
		objs = fmt.Sprintf("%d objects and %d incomplete uploads in %s", len(s.Objects)-s.uploads(), s.uploads(), s.Store)
	}
	fmt.Fprintf(w, "namespace %s is NOT empty at revision %d: %d keys, %d live leases, %s\n",
		s.Root, s.Revision, s.Total, s.liveLeases(), objs)
}

// session is what check and delete share: the options, an etcd client, the
