// Package master is the reference master process: configuration and its
// validation, leader election, the primary's group-committed batch writes,
// the standby apply loop, promotion, the client API, metrics, logs and
// failpoints. The harness drives it only through the contract in CONTRACT.md.
package master
