# certs.sh: the shell tests' certificates, made with openssl at test time (sourced,
# POSIX sh). make_certs DIR writes DIR/ca.crt and ca.key (a CA), DIR/server.crt and
# server.key (signed by it, for IP 127.0.0.1 and localhost, server and client use) and
# DIR/other-ca.crt (an unrelated CA that signed nothing); openssl's output goes to
# DIR/openssl.log. Returns non-zero when openssl failed.
make_certs() {
  cat >"$1/openssl.cnf" <<'EOC'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = delayq test
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
[server]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
EOC
  ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
  # shellcheck disable=SC2086
  (
    cd "$1" &&
      openssl req -x509 -new -config openssl.cnf -extensions ca $ec -keyout ca.key \
        -out ca.crt -days 2 -subj "/CN=delayq test CA" &&
      openssl req -x509 -new -config openssl.cnf -extensions ca $ec -keyout other.key \
        -out other-ca.crt -days 2 -subj "/CN=unrelated CA" &&
      openssl req -new -config openssl.cnf $ec -keyout server.key -out server.csr \
        -subj /CN=localhost &&
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 2 \
        -extfile openssl.cnf -extensions server -out server.crt
  ) >"$1/openssl.log" 2>&1
}
