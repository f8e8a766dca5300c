"""What mdmem answers and changes, built on the index: search, recall, graph views, lifecycle, sync …"""
