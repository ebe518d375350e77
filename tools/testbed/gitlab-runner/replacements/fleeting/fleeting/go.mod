module gitlab.com/gitlab-org/fleeting/fleeting

go 1.24
