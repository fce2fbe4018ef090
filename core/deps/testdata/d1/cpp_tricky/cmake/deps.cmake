find_package(CURL)   # also via pkg-config above
