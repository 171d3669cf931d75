#!/bin/sh
# install_with_libs.sh DEST PROGRAM...: installs each program into DEST/usr/local/bin and
# the shared libraries it links, except glibc's, into DEST/usr/local/lib/tally (the images
# set LD_LIBRARY_PATH to it). A runtime stage then copies DEST and needs no package of its
# own: no -dev packages, no list of runtime package names to keep in step with the
# build's, and none of a package's other dependencies (postgresql-client's perl, 140 MB,
# for pg_isready).
set -eu
dest=$1
shift
mkdir -p "$dest/usr/local/bin" "$dest/usr/local/lib/tally"
for program in "$@"; do
  install -m 0755 "$program" "$dest/usr/local/bin/"
  ldd "$program" | awk '/=> \// { print $3 }' \
    | grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|ld-linux[^/]*)\.so' \
    | xargs -r -I{} cp -L {} "$dest/usr/local/lib/tally/"
done
