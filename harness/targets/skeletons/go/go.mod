module __NAME__

go 1.19
