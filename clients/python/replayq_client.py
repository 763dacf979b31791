# placeholder, written below
