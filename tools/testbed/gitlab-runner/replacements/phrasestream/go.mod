// Replaces gitlab.com/ajwalker/phrasestream, which the Go module proxy
// refuses (403). Only the testbed's GitLab Runner build uses it (../../go.mod).
module gitlab.com/ajwalker/phrasestream

go 1.24
