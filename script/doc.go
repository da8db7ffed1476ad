package script
