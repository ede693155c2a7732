package s3

// SetUploadPage sets how many uploads one ListMultipartUploads request asks
// for, so tests can page through a few.
func SetUploadPage(s *Store, n int) { s.uploadPage = n }
