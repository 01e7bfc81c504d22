// Package testhook holds the switches and hooks that gocuda's own tests
// reach across package boundaries: a kernel that keeps a stream busy, and a
// switch that forces the CUDA backend's staged peer copies. They live under
// internal/ so that no user mistakes them for API; nothing outside the
// module can import them.
package testhook
