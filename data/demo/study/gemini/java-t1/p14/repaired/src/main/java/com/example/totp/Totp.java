package com.example.totp;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.commons.codec.binary.Base32;

/** RFC 6238 time-based one-time passwords (HMAC-SHA1, 30-second steps, 6 digits). */
public final class Totp {

    private Totp() {}

    public static String code(byte[] key, long unixSeconds, int digits) throws GeneralSecurityException {
        long counter = unixSeconds / 30;
        Mac mac = Mac.getInstance("HmacSHA1");
        mac.init(new SecretKeySpec(key, "HmacSHA1"));
        byte[] h = mac.doFinal(ByteBuffer.allocate(8).putLong(counter).array());
        int offset = h[h.length - 1] & 0x0f;
        int binary = ((h[offset] & 0x7f) << 24) | ((h[offset + 1] & 0xff) << 16)
                | ((h[offset + 2] & 0xff) << 8) | (h[offset + 3] & 0xff);
        int mod = (int) Math.pow(10, digits);
        return String.format("%0" + digits + "d", binary % mod);
    }

    public static void main(String[] args) throws GeneralSecurityException {
        if (args.length < 1) {
            System.err.println("usage: java -jar totp-generator.jar BASE32-SECRET [UNIX-TIME]");
            System.exit(64);
        }
        byte[] key = new Base32().decode(args[0]);
        long now = args.length > 1 ? Long.parseLong(args[1]) : System.currentTimeMillis() / 1000;
        System.out.println(code(key, now, 6));
    }
}
