import Nu11Format
