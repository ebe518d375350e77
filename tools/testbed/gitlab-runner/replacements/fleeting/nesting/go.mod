module gitlab.com/gitlab-org/fleeting/nesting

go 1.24
