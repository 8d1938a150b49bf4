package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

type pkiFiles struct {
	caFile, wrongCAFile, certFile, keyFile, saKeyFile, saPubFile string
	caPEM                                                        []byte
}

// writePKI writes ca.crt, wrong-ca.crt (an unrelated CA), serving.crt/.key
// (signed by ca.crt, for 127.0.0.1, ::1, localhost and the in-cluster
// names) and the service-account key pair sa.key/sa.pub into dir.
func writePKI(dir string) (*pkiFiles, error) {
	p := &pkiFiles{
		caFile:      filepath.Join(dir, "ca.crt"),
		wrongCAFile: filepath.Join(dir, "wrong-ca.crt"),
		certFile:    filepath.Join(dir, "serving.crt"),
		keyFile:     filepath.Join(dir, "serving.key"),
		saKeyFile:   filepath.Join(dir, "sa.key"),
		saPubFile:   filepath.Join(dir, "sa.pub"),
	}
	now := time.Now().Add(-time.Hour)
	caKey, caCert, caDER, err := newCA("kasbox-ca", now)
	if err != nil {
		return nil, err
	}
	p.caPEM = pemBytes("CERTIFICATE", caDER)
	if err := os.WriteFile(p.caFile, p.caPEM, 0o644); err != nil {
		return nil, err
	}
	_, _, wrongDER, err := newCA("kasbox-ca", now) // same name, other key
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.wrongCAFile, pemBytes("CERTIFICATE", wrongDER), 0o644); err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.certFile, pemBytes("CERTIFICATE", der), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.keyFile, pemBytes("EC PRIVATE KEY", kder), 0o600); err != nil {
		return nil, err
	}

	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.saKeyFile, pemBytes("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(sa)), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.saPubFile, pemBytes("PUBLIC KEY", pub), 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

func newCA(cn string, now time.Time) (crypto.Signer, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return key, cert, der, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func pemBytes(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// writeKubeconfig writes a one-context kubeconfig for a token user.
func writeKubeconfig(path, server string, caPEM []byte, name, token string) error {
	s := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kasbox
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: %s@kasbox
  context:
    cluster: kasbox
    user: %s
    namespace: default
current-context: %s@kasbox
`, server, base64.StdEncoding.EncodeToString(caPEM), name, token, name, name, name)
	return os.WriteFile(path, []byte(s), 0o600)
}
