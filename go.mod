module github.com/fifobridge/fifobridge

go 1.26.0

require golang.org/x/sys v0.49.0

require github.com/fsnotify/fsnotify v1.10.1 // indirect
