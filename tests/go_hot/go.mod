module go_hot

go 1.19
